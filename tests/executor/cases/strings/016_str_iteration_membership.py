s = 'mississippi'
counts = {}
for ch in s:
    counts[ch] = counts.get(ch, 0) + 1
print(counts, 'ss' in s, 'sss' in s, s.count('ss'))
sorted(set(s))
