# expect: native
raise 'just a string'
