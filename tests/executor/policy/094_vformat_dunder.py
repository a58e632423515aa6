# imports: string
# expect: refused Forbidden access to dunder attribute: __class__
import string
string.Formatter().vformat('{0.__class__}', [1], {})
