# imports: operator
# expect: native
import operator
class P:
    def __init__(self):
        self.inner = self
        self.value = 7
operator.attrgetter('inner.inner.value', 'value')(P())
