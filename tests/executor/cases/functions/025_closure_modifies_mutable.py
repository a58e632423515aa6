def make():
    items = []
    def add(x):
        items.append(x)
        return len(items)
    return add, items
add, items = make()
add('a')
add('b')
items
