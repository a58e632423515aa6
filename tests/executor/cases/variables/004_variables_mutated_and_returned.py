# variables: {"acc": [], "counts": {}}
for w in 'a b a c'.split():
    acc.append(w)
    counts[w] = counts.get(w, 0) + 1
(acc, counts)
