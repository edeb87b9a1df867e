from cuda.bindings import driver

(err,) = driver.cuInit(0)
KERNEL = str(err)
