text = 'The quick brown fox jumps over the lazy dog and keeps running far away'
width = 16
lines, cur = [], ''
for word in text.split():
    if cur and len(cur) + 1 + len(word) > width:
        lines.append(cur)
        cur = word
    else:
        cur = cur + ' ' + word if cur else word
lines.append(cur)
for l in lines:
    print(f'|{l:<{width}}|')
len(lines)
