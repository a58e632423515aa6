# expect: refused Forbidden access to the function class
# function(code, globals) runs any code object; a stdlib function hands over its class.
import statistics
type(statistics.mean)
