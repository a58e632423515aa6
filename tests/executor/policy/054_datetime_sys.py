# expect: refused Forbidden access to module: sys
import datetime
datetime.sys
