# expect: native
import datetime
datetime.date(2020, 1, 1).isoformat()
