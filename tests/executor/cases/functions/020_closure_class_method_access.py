def make_class(v):
    class K:
        def get(self):
            return v
    return K
make_class(42)().get()
