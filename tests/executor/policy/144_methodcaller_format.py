# imports: operator
# expect: refused operator.attrgetter/methodcaller cannot reach format
# methodcaller would call str.format natively, with no check of the template's field names
# (a stdlib function's globals, printed: "{0.__globals__}").
import operator, random
operator.methodcaller('format', random.choice)('{0.__globals__}')
