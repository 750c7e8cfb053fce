"""placeholder: filled in by its issue."""
import click


@click.group()
def model() -> None:
    """Install the embedded local model."""


@click.group()
def llm() -> None:
    """Talk to the configured models."""
