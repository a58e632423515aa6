import collections
import re
text = "It was the best of times, it was the worst of times, it was the age of wisdom"
words = re.findall(r"[a-z']+", text.lower())
freq = collections.Counter(words)
top = freq.most_common(3)
print(top)
longest = max(set(words), key=lambda w: (len(w), w))
(top, longest, len(words), len(freq))
