# expect: refused Forbidden function evaluation: 'breakpoint'
breakpoint()
