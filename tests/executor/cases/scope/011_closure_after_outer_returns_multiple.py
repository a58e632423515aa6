def counters():
    def make(start):
        n = start
        def step():
            nonlocal n
            n += 1
            return n
        return step
    return make(0), make(100)
a, b = counters()
(a(), a(), b(), a())
