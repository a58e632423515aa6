# expect: native
b'\xff\xfe\xfa'.decode('utf-8')
