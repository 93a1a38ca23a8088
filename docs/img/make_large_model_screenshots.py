import sys, pickle, time
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from explorer.main_window import MainWindow
s = pickle.load(open('/tmp/i16/llama.pkl', 'rb'))
def settle(win):
    for _ in range(300):
        app.processEvents(); time.sleep(0.02)
def shot(size, stage, out, target):
    win = MainWindow(QSettings(f"/tmp/i16/doc{size}.ini", QSettings.Format.IniFormat))
    w, h = size; win.resize(w, h); win.show()
    win.set_session(s, "hf_llama_train.log")
    win.set_focus_mode(True)
    win.navigation.stage_actions[stage].trigger(); settle(win)
    key = {"dynamo": "DynamoPane", "aot": "AotPane"}[stage]
    c = win.panes[key].graphs.canvas
    res = c.result; sc = res.scene; n = res.arrays.n
    if target == "fold":
        f = res.tree.fold[0]
        c.view.center_on_point(float(sc.x[n+f]), float(sc.y[n+f]), 0.9)
    else:
        g, y = sc.sections[0]
        c.view.scale = 0.6
        c.view.tx = 20; c.view.ty = c.view.height()*0.25 - y*0.6
        c.view.update()
    settle(win)
    win.grab().save(out)
#shot((1366, 768), "dynamo", "/work/wt/i16/docs/img/llama_dynamo_1366.png", "fold")
shot((1600, 1000), "aot", "/work/wt/i16/docs/img/llama_aot_1600.png", "split")
