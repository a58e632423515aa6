def pairs():
    for i in range(3):
        yield (str(i), i)
(dict(pairs()), set(v for _, v in pairs()), {k: v for k, v in pairs()})
