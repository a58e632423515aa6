words = ['apple', 'bob', 'cat', 'apple']
lengths = {w: len(w) for w in words}
inv = {v: k for k, v in lengths.items()}
print(lengths, inv)
{i: i * i for i in range(5) if i % 2}
