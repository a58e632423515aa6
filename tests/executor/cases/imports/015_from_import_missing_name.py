# expect: native
from math import no_such_function
