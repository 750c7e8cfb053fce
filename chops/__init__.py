"""CHOPS: a customer-service agent over a user database and help guides."""
