"""Which team and backend each stored Responses API response belongs to."""

from gateway.response_owners.owners import OwnerQueries, ResponseOwners, StoredOwner

__all__ = ["OwnerQueries", "ResponseOwners", "StoredOwner"]
