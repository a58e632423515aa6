print(isinstance(1, int), isinstance(True, int), isinstance(1.0, (int, float)), isinstance('s', str))
print(type(1) is int, type([]) == list, 'NoneType')
print(issubclass(bool, int), issubclass(int, object))
type(3.0) is float
