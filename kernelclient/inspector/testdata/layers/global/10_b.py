def start():
    global STATE
    STATE = 1
