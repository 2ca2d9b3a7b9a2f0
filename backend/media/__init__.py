"""Media: videos the app serves, demo videos, frame sampling."""
