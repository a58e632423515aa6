def acc(v, store=[]):
    store.append(v)
    return store
acc(1)
# ---
acc(2)
