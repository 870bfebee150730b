"""How a script replays a Converse request through boto3 (``exchange/snippets.py`` writes it).

boto3 finds the credentials itself (``AWS_BEARER_TOKEN_BEDROCK``, a Bedrock API key; or
``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY``; or a profile), so the script names none.
The model id is a parameter of its own (it travels in the URL). The request's bytes fields
(images, documents, redacted reasoning) are base64 text in JSON, and boto3 takes bytes and
encodes them itself: the script decodes them where the service model says bytes go, or they
would be encoded twice.
"""

from __future__ import annotations

from flowdebug.protocols.facts import Snippet

CALL = '''

def blobs(value, shape):
    """``value`` with base64 text decoded where the API takes bytes (boto3 encodes them)."""
    if shape.type_name == "blob" and isinstance(value, str):
        return base64.b64decode(value)
    if shape.type_name == "structure" and isinstance(value, dict) and not shape.is_document_type:
        members = shape.members
        return {k: blobs(v, members[k]) if k in members else v for k, v in value.items()}
    if shape.type_name == "list" and isinstance(value, list):
        return [blobs(v, shape.member) for v in value]
    return value


client = boto3.client("bedrock-runtime", region_name=os.environ.get("AWS_REGION", "us-east-1"))
shape = client.meta.service_model.operation_model("Converse").input_shape
response = client.converse(**{**blobs(REQUEST, shape), "modelId": MODEL})
response.pop("ResponseMetadata", None)
print(json.dumps(response, indent=2, default=str))
'''

SNIPPET = Snippet(
    "boto3",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
    "import boto3",
    CALL[1:],  # two blank lines after REQUEST
    stdlib=("base64", "json", "os"),
    model_in_url=True,
)
