def make(n):
    def get():
        return n
    n = n * 2
    return get
make(5)()
