def nothing():
    pass
class Empty:
    pass
if True:
    pass
for _ in range(2):
    pass
print(nothing(), Empty)
nothing()
