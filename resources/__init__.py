"""Bundled example model files, their pre-recorded sessions and the distributed job.

Installed as the package `compilescope_resources` so a wheel carries them (see
compiler_core/resource_paths.py); nothing here is imported as code by the app.
"""
