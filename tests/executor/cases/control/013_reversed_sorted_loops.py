words = ['pear', 'fig', 'apple']
for w in reversed(words):
    print(w)
for w in sorted(words, key=len, reverse=True):
    print(w)
list(reversed(range(3)))
