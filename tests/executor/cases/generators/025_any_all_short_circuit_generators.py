seen = []
def it():
    for i in range(10):
        seen.append(i)
        yield i
print(any(x > 2 for x in it()), seen)
seen.clear()
print(all(x < 1 for x in it()), seen)
seen
