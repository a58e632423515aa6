class Thing:
    pass
Thing
