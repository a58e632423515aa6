# expect: refused Forbidden function evaluation: 'open'
open('/etc/passwd').read()
