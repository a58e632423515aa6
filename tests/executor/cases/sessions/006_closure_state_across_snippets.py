def make():
    total = 0
    def add(v):
        nonlocal total
        total += v
        return total
    return add
add = make()
add(5)
# ---
add(10)
