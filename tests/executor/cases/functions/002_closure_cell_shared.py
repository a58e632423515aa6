def make():
    count = 0
    def inc():
        nonlocal count
        count += 1
        return count
    def get():
        return count
    return inc, get
inc, get = make()
inc()
inc()
print(get())
inc2, get2 = make()
inc2()
(get(), get2())
