"""The main side of a run: executors and worker pools that hand out tasks, and the results
file and reports built from the batches they return. It may import the worker and input sides."""
