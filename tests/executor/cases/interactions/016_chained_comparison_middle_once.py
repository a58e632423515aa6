log = []
def mid():
    log.append('mid')
    return 5
(1 < mid() < 10, log)
