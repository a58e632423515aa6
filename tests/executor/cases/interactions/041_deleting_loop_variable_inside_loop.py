out = []
for i in range(3):
    out.append(i)
    del i
try:
    i
except NameError:
    out.append('i deleted')
out
