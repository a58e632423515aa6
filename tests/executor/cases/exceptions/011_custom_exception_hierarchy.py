class Base(Exception):
    pass
class Specific(Base):
    def __str__(self):
        return 'specific!'
try:
    raise Specific('arg')
except Base as e:
    print(type(e).__name__, str(e), e.args, isinstance(e, Exception))
repr(Specific('a', 2))
