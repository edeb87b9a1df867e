from cuda.bindings import driver

driver.cuInit(0)
