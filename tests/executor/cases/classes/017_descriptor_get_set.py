class Typed:
    def __init__(self, name, kind):
        self.name, self.kind = name, kind
    def __get__(self, obj, owner):
        if obj is None:
            return self
        return obj.__dict__.get(self.name) if False else getattr(obj, '_' + self.name, None)
    def __set__(self, obj, value):
        if not isinstance(value, self.kind):
            raise TypeError(self.name + ' must be ' + self.kind.__name__)
        setattr(obj, '_' + self.name, value)
class Rec:
    age = Typed('age', int)
r = Rec()
r.age = 5
print(r.age)
try:
    r.age = 'old'
except TypeError as e:
    print('TypeError:', e)
r.age
