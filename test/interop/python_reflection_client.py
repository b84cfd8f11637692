"""A generic gRPC client in Python that knows no .proto of the payment server's, only the standard
reflection and health protos: lists the services by reflection, reads the methods of
g00.payments.v2.PaymentsService from the file descriptor the server sends, and checks health.

Usage: python_reflection_client.py STUBS_DIR HOST:PORT  (STUBS_DIR: grpc_tools.protoc output of
reflection.proto (v1alpha) and health.proto). Prints one JSON object.
"""
import json
import sys

sys.path.insert(0, sys.argv[1])

import grpc  # noqa: E402
from google.protobuf import descriptor_pb2  # noqa: E402
import reflection_pb2  # noqa: E402
import reflection_pb2_grpc  # noqa: E402
import health_pb2  # noqa: E402
import health_pb2_grpc  # noqa: E402

SERVICE = "g00.payments.v2.PaymentsService"

with grpc.insecure_channel(sys.argv[2]) as channel:
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)

    def ask(**request):
        return next(reflection.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(**request)])))

    services = sorted(s.name for s in ask(list_services="*").list_services_response.service)
    methods = []
    for encoded in ask(file_containing_symbol=SERVICE).file_descriptor_response.file_descriptor_proto:
        file = descriptor_pb2.FileDescriptorProto.FromString(encoded)
        for service in file.service:
            if f"{file.package}.{service.name}" == SERVICE:
                methods += [[m.name, m.client_streaming, m.server_streaming] for m in service.method]
    health = health_pb2_grpc.HealthStub(channel)
    status = {
        name: health_pb2.HealthCheckResponse.ServingStatus.Name(health.Check(health_pb2.HealthCheckRequest(service=name)).status)
        for name in ["", SERVICE]
    }
    print(json.dumps({"services": services, "methods": methods, "health": status}))
