import jax

jax.devices()
