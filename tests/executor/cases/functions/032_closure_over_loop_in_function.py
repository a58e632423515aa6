def make_all():
    out = []
    for i in range(3):
        def f():
            return i
        out.append(f)
    return [g() for g in out]
make_all()
