# expect: native
class QuotaExceeded(Exception):
    pass
raise QuotaExceeded('used 11 of 10')
