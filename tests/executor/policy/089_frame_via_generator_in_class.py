# expect: refused Forbidden access to introspection attribute: gi_frame
class K:
    def gen(self):
        yield 1
[x for x in [K().gen()]][0].gi_frame
