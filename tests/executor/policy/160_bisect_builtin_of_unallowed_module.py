# expect: refused Forbidden access to _bisect.bisect_left: module _bisect is not allowed
import statistics
statistics.bisect_left
