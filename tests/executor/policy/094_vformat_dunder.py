# imports: string
# expect: refused Forbidden access to dunder attribute: __dict__
import string
string.Formatter().vformat('{0.__dict__}', [1], {})
