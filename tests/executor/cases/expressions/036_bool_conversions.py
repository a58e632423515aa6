print(bool(0), bool(1), bool(''), bool('a'), bool([]), bool([0]), bool(None), bool(0.0), bool({}))
print(int(True) + 1, True * 10, False - 1)
bool(range(0))
