def gen_factory(n):
    def gen():
        for i in range(n):
            yield i * n
    return gen
list(gen_factory(3)())
