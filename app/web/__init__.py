"""HTTP: FastAPI dependencies, auth, request bodies, schemas, templating, the cache, the routes."""
