# expect: error NameError
print('before')
print(undefined_variable)
